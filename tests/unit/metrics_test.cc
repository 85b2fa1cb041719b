// The service's metrics (builds/metrics.h): the Prometheus text, the `phase` label's
// bounded values and their escaping, and counters updated from many threads.
#include "builds/metrics.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace trtwatch::builds {
namespace {

bool HasLine(const std::string& text, const std::string& line) {
  return text.find(line + "\n") != std::string::npos;
}

size_t CountOf(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(MetricsTest, RendersPrometheusText) {
  Metrics m;
  m.BuildFinished("succeeded", 3);
  m.BuildFinished("succeeded", 20);
  m.BuildFinished("cancelled", 0.5);
  m.PhaseFinished("Building engine", 0.2);
  m.SseClientOpened();
  m.SseClientOpened();
  m.SseClientClosed();
  m.SseEventsDropped(7);
  const std::string text = m.Render(/*running=*/2, /*queued=*/5);
  auto has = [&](const std::string& line) { return HasLine(text, line); };
  EXPECT_TRUE(has("# TYPE trtwatch_builds_finished_total counter"));
  EXPECT_TRUE(has("trtwatch_builds_finished_total{status=\"succeeded\"} 2"));
  EXPECT_TRUE(has("trtwatch_builds_finished_total{status=\"cancelled\"} 1"));
  EXPECT_TRUE(has("trtwatch_builds_finished_total{status=\"failed\"} 0"));
  EXPECT_TRUE(has("trtwatch_builds_running 2"));
  EXPECT_TRUE(has("trtwatch_builds_queued 5"));
  EXPECT_TRUE(has("# TYPE trtwatch_build_duration_seconds histogram"));
  EXPECT_TRUE(has("trtwatch_build_duration_seconds_bucket{le=\"1\"} 1"));
  EXPECT_TRUE(has("trtwatch_build_duration_seconds_bucket{le=\"5\"} 2"));
  EXPECT_TRUE(has("trtwatch_build_duration_seconds_bucket{le=\"15\"} 2"));
  EXPECT_TRUE(has("trtwatch_build_duration_seconds_bucket{le=\"60\"} 3"));
  EXPECT_TRUE(has("trtwatch_build_duration_seconds_bucket{le=\"+Inf\"} 3"));
  EXPECT_TRUE(has("trtwatch_build_duration_seconds_sum 23.5"));
  EXPECT_TRUE(has("trtwatch_build_duration_seconds_count 3"));
  EXPECT_TRUE(has("# TYPE trtwatch_phase_duration_seconds histogram"));
  EXPECT_TRUE(has("trtwatch_phase_duration_seconds_bucket{phase=\"Building engine\",le=\"0.1\"} 0"));
  EXPECT_TRUE(has("trtwatch_phase_duration_seconds_bucket{phase=\"Building engine\",le=\"0.5\"} 1"));
  EXPECT_TRUE(has("trtwatch_phase_duration_seconds_bucket{phase=\"Building engine\",le=\"+Inf\"} 1"));
  EXPECT_TRUE(has("trtwatch_phase_duration_seconds_sum{phase=\"Building engine\"} 0.2"));
  EXPECT_TRUE(has("trtwatch_phase_duration_seconds_count{phase=\"Building engine\"} 1"));
  EXPECT_TRUE(has("trtwatch_sse_clients 1"));
  EXPECT_TRUE(has("trtwatch_sse_events_dropped_total 7"));
  // Every sample line belongs to a declared metric.
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("#", 0) == 0) continue;
    EXPECT_EQ(line.rfind("trtwatch_", 0), 0u) << line;
  }
}

TEST(MetricsTest, EngineCacheHitsMissesAndReusedBytesAreCounted) {
  Metrics m;
  const std::string before = m.Render(0, 0);
  EXPECT_TRUE(HasLine(before, "trtwatch_engine_cache_hits_total 0"));
  m.EngineCacheUsed(true, 1000);
  m.EngineCacheUsed(true, 24);
  m.EngineCacheUsed(false, 5000);  // a miss reuses nothing
  const std::string text = m.Render(0, 0);
  EXPECT_TRUE(HasLine(text, "# TYPE trtwatch_engine_cache_hits_total counter")) << text;
  EXPECT_TRUE(HasLine(text, "trtwatch_engine_cache_hits_total 2"));
  EXPECT_TRUE(HasLine(text, "trtwatch_engine_cache_misses_total 1"));
  EXPECT_TRUE(HasLine(text, "trtwatch_engine_cache_reused_bytes_total 1024"));
}

TEST(MetricsTest, AReplicaLabelsEverySampleAndNoComment) {
  Metrics metrics;
  metrics.BuildFinished("succeeded", 2);
  metrics.LabelReplica("gpu-\"a\"");
  const std::string text = metrics.Render(1, 0);
  EXPECT_TRUE(HasLine(text, "trtwatch_builds_running{replica=\"gpu-\\\"a\\\"\"} 1"));
  EXPECT_TRUE(HasLine(text, "trtwatch_builds_finished_total{replica=\"gpu-\\\"a\\\"\",status=\"succeeded\"} 1"));
  EXPECT_TRUE(HasLine(text, "# TYPE trtwatch_builds_running gauge"));
  size_t samples = 0;
  size_t labelled = 0;
  for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string line = text.substr(start, end - start);
    if (line.empty() || line[0] == '#') continue;
    ++samples;
    labelled += line.find("replica=\"gpu-") != std::string::npos;
  }
  EXPECT_GT(samples, 20u);
  EXPECT_EQ(labelled, samples);
}

TEST(MetricsTest, PhasesWithNumberedNamesShareOneSeries) {
  Metrics m;
  m.PhaseFinished("Building layer 12 of 480", 1);
  m.PhaseFinished("Building layer 13 of 480", 2);
  m.PhaseFinished("Layer[17]", 0.5);
  m.PhaseFinished("Layer[18]", 0.5);
  const std::string text = m.Render(0, 0);
  EXPECT_TRUE(HasLine(text, "trtwatch_phase_duration_seconds_count{phase=\"Building layer N of N\"} 2"));
  EXPECT_TRUE(HasLine(text, "trtwatch_phase_duration_seconds_sum{phase=\"Building layer N of N\"} 3"));
  EXPECT_TRUE(HasLine(text, "trtwatch_phase_duration_seconds_count{phase=\"Layer[N]\"} 2"));
  EXPECT_EQ(CountOf(text, "trtwatch_phase_duration_seconds_count{"), 2u);
}

TEST(MetricsTest, PhaseLabelValuesAreCappedAndTheRestCountAsOther) {
  Metrics m;
  // Names without digits cannot be folded: each is a family of its own.
  auto name = [](size_t i) { return "node " + std::string(1, static_cast<char>('a' + i % 26)) +
                                    std::string(1, static_cast<char>('a' + i / 26 % 26)); };
  const size_t n = Metrics::kMaxPhaseFamilies + 50;
  for (size_t i = 0; i < n; ++i) m.PhaseFinished(name(i), 1);
  m.PhaseFinished(name(0), 1);  // a family kept before the cap stays its own
  const std::string text = m.Render(0, 0);
  EXPECT_EQ(CountOf(text, "trtwatch_phase_duration_seconds_count{"), Metrics::kMaxPhaseFamilies + 1);
  EXPECT_TRUE(HasLine(text, "trtwatch_phase_duration_seconds_count{phase=\"other\"} 50"));
  EXPECT_TRUE(HasLine(text, "trtwatch_phase_duration_seconds_count{phase=\"" + name(0) + "\"} 2"));
}

TEST(MetricsTest, PhaseLabelValuesAreEscapedAndValidUtf8) {
  Metrics m;
  m.PhaseFinished("say \"hi\"\\\nnow", 1);
  m.PhaseFinished("Évaluation \xC3", 1);  // cut after a lead byte
  const std::string text = m.Render(0, 0);
  EXPECT_TRUE(HasLine(text, "trtwatch_phase_duration_seconds_count{phase=\"say \\\"hi\\\"\\\\\\nnow\"} 1"));
  EXPECT_TRUE(HasLine(text, "trtwatch_phase_duration_seconds_count{phase=\"Évaluation \xEF\xBF\xBD\"} 1"));
  EXPECT_EQ(EscapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(EscapeLabelValue("plain"), "plain");
}

TEST(MetricsTest, CountersFromManyThreadsAddUp) {
  Metrics m;
  constexpr int kThreads = 8;
  constexpr int kRounds = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&m, t] {
      for (int i = 0; i < kRounds; ++i) {
        m.SseClientOpened();
        m.SseEventsDropped(2);
        m.Request(i % 2 == 0 ? 200 : 404);
        m.AcceptFailed();
        m.ConnectionRefused();
        m.AuditWriteFailed();
        m.SseClientCutOff();
        m.PhaseFinished("Tactic " + std::to_string(i), 0.25);
        if (t == 0 && i % 100 == 0) m.BuildFinished("succeeded", 1);
        m.SseClientClosed();
        if (i % 500 == 0) (void)m.Render(0, 0);  // a scrape in the middle of it all
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const std::string text = m.Render(0, 0);
  const std::string total = std::to_string(kThreads * kRounds);
  EXPECT_TRUE(HasLine(text, "trtwatch_sse_clients 0"));
  EXPECT_TRUE(HasLine(text, "trtwatch_sse_events_dropped_total " + std::to_string(2 * kThreads * kRounds)));
  EXPECT_TRUE(HasLine(text, "trtwatch_sse_clients_cut_off_total " + total));
  EXPECT_TRUE(HasLine(text, "trtwatch_accept_failures_total " + total));
  EXPECT_TRUE(HasLine(text, "trtwatch_connections_refused_total " + total));
  EXPECT_TRUE(HasLine(text, "trtwatch_audit_write_failures_total " + total));
  EXPECT_TRUE(HasLine(text, "trtwatch_http_responses_total{code=\"200\"} " + std::to_string(kThreads * kRounds / 2)));
  EXPECT_TRUE(HasLine(text, "trtwatch_http_responses_total{code=\"404\"} " + std::to_string(kThreads * kRounds / 2)));
  EXPECT_TRUE(HasLine(text, "trtwatch_phase_duration_seconds_count{phase=\"Tactic N\"} " + total));
  EXPECT_TRUE(HasLine(text, "trtwatch_builds_finished_total{status=\"succeeded\"} " + std::to_string(kRounds / 100)));
}

}  // namespace
}  // namespace trtwatch::builds
