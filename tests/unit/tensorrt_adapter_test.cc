// The progress and logger adapters, compiled against tests/tensorrt_double.
#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>

#include "backends/tensorrt/logger_adapter.h"
#include "backends/tensorrt/progress_adapter.h"
#include "core/clock.h"
#include "support/fake_clock.h"

namespace trtwatch::trt {
namespace {

std::vector<Event> Take(Monitor& monitor) {
  std::vector<Event> events;
  monitor.TakePending(&events);
  return events;
}

TEST(ProgressAdapterTest, ForwardsTheThreeCallbacksThroughTensorRtsInterface) {
  FakeClock clock;
  Monitor monitor(clock);
  ProgressAdapter adapter(monitor);
  nvinfer1::IProgressMonitor& trt = adapter;  // as TensorRT holds it
  trt.phaseStart("Building engine", nullptr, 2);
  trt.phaseStart("Timing tactics", "Building engine", 3);
  EXPECT_TRUE(trt.stepComplete("Timing tactics", 0));
  trt.phaseFinish("Timing tactics");
  EXPECT_TRUE(trt.stepComplete("Building engine", 0));
  trt.phaseFinish("Building engine");

  const std::vector<Event> events = Take(monitor);
  std::vector<std::string> seen;
  for (const Event& e : events) {
    // Steps carry the phase's id; the name is the phase_start's.
    seen.push_back(std::string(EventTypeName(e.type)) + ":" +
                   (e.type == EventType::kStep ? std::to_string(e.id) + "/" + std::to_string(e.step) : e.phase));
  }
  ASSERT_EQ(events.size(), 6u);
  const std::string root = std::to_string(events[0].id), child = std::to_string(events[1].id);
  EXPECT_EQ(seen, (std::vector<std::string>{"phase_start:Building engine", "phase_start:Timing tactics",
                                            "step:" + child + "/0", "phase_finish:Timing tactics",
                                            "step:" + root + "/0", "phase_finish:Building engine"}));
  EXPECT_EQ(events[1].parent, events[0].id);
  EXPECT_EQ(events[1].total, 3);
  EXPECT_TRUE(events[3].early);  // 1 of 3 steps
}

TEST(ProgressAdapterTest, ReturnsFalseOnceCancelIsRequested) {
  FakeClock clock;
  Monitor monitor(clock);
  ProgressAdapter adapter(monitor);
  nvinfer1::IProgressMonitor& trt = adapter;
  trt.phaseStart("Building engine", nullptr, 5);
  EXPECT_TRUE(trt.stepComplete("Building engine", 0));
  monitor.RequestCancel(CancelReason::kUser, "stop");
  EXPECT_FALSE(trt.stepComplete("Building engine", 1));
  EXPECT_FALSE(trt.stepComplete("Building engine", 2));
}

#if NV_TENSORRT_MAJOR >= 10
TEST(ProgressAdapterTest, KeepsTensorRtsInterfaceInfo) {
  FakeClock clock;
  Monitor monitor(clock);
  ProgressAdapter adapter(monitor);
  const nvinfer1::InterfaceInfo info = adapter.getInterfaceInfo();
  EXPECT_STREQ(info.kind, "IProgressMonitor");
  EXPECT_EQ(info.major, 1);
}
#else
TEST(ProgressAdapterTest, IsAPlainInterfaceOnTensorRt9) {
  static_assert(!std::is_base_of_v<nvinfer1::IVersionedInterface, nvinfer1::IProgressMonitor>);
  EXPECT_EQ(NV_TENSORRT_MAJOR, 9);
}
#endif

std::vector<Event> Logs(Monitor& monitor) {
  std::vector<Event> logs;
  for (Event& e : Take(monitor)) {
    if (e.type == EventType::kLog) logs.push_back(std::move(e));
  }
  return logs;
}

TEST(LoggerAdapterTest, FiltersBySeverityAndMapsLevels) {
  FakeClock clock;
  Monitor monitor(clock);
  LoggerAdapter logger(Severity::kWarning);
  logger.Attach(&monitor);
  nvinfer1::ILogger& trt = logger;
  trt.log(nvinfer1::ILogger::Severity::kVERBOSE, "verbose");
  trt.log(nvinfer1::ILogger::Severity::kINFO, "info");
  trt.log(nvinfer1::ILogger::Severity::kWARNING, "warning");
  trt.log(nvinfer1::ILogger::Severity::kERROR, "error");
  trt.log(nvinfer1::ILogger::Severity::kINTERNAL_ERROR, "internal");
  const std::vector<Event> logs = Logs(monitor);
  ASSERT_EQ(logs.size(), 3u);
  EXPECT_EQ(logs[0].severity, Severity::kWarning);
  EXPECT_EQ(logs[0].message, "warning");
  EXPECT_EQ(logs[1].severity, Severity::kError);
  EXPECT_EQ(logs[2].severity, Severity::kInternalError);
  EXPECT_EQ(logger.RecentErrors(), (std::vector<std::string>{"error", "internal"}));
}

TEST(LoggerAdapterTest, VerboseThresholdPassesEverything) {
  FakeClock clock;
  Monitor monitor(clock);
  LoggerAdapter logger(Severity::kVerbose);
  logger.Attach(&monitor);
  logger.log(nvinfer1::ILogger::Severity::kVERBOSE, "v");
  logger.log(nvinfer1::ILogger::Severity::kINFO, "i");
  EXPECT_EQ(Logs(monitor).size(), 2u);
}

TEST(LoggerAdapterTest, KeepsTheLatestErrorsEvenWhenDetached) {
  LoggerAdapter logger(Severity::kWarning);
  logger.log(nvinfer1::ILogger::Severity::kERROR, nullptr);
  for (int i = 0; i < 10; ++i) logger.log(nvinfer1::ILogger::Severity::kERROR, ("e" + std::to_string(i)).c_str());
  const std::vector<std::string> errors = logger.RecentErrors();
  ASSERT_EQ(errors.size(), LoggerAdapter::kKeptErrors);
  EXPECT_EQ(errors.front(), "e5");
  EXPECT_EQ(errors.back(), "e9");
  logger.ClearErrors();
  EXPECT_TRUE(logger.RecentErrors().empty());
}

}  // namespace
}  // namespace trtwatch::trt
