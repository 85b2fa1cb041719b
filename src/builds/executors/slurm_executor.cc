#include <utility>  // before Asio: its coroutine header needs std::exchange (g++ 12)

#include "builds/executors/slurm_executor.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>

#include "builds/executors/slurm_job_info.h"
#include "builds/executors/slurm_outcome.h"

namespace trtwatch::builds {

namespace asio = boost::asio;

namespace {

constexpr std::chrono::seconds kCommandLimit{30};  // sbatch, scontrol, scancel: each

// The batch script: where it runs goes to the facts file (its first argument), then it
// becomes trtwatch itself, so `scancel --full --signal=TERM` reaches the build.
constexpr const char* kJobScript =
    "#!/bin/sh\n"
    "# One trtwatch build as a Slurm batch job (written by trtwatch serve --executor slurm).\n"
    "facts=\"$1\"; shift\n"
    "printf 'node=%s\\ncuda_visible_devices=%s\\nslurm_job_gpus=%s\\n' \"$SLURMD_NODENAME\" "
    "\"$CUDA_VISIBLE_DEVICES\" \"$SLURM_JOB_GPUS\" > \"$facts.part\" && mv \"$facts.part\" \"$facts\"\n"
    "exec \"$@\"\n";

// A Slurm command as run: from commands_dir, or found on PATH.
std::string Command(const SlurmOptions& options, const char* name) {
  return options.commands_dir.empty() ? name : options.commands_dir + "/" + name;
}

// Reads up to `max` bytes of `path` from `*offset` on; advances it. 0 when there is
// nothing new (or no file yet).
size_t ReadFrom(const std::string& path, uint64_t* offset, char* into, size_t max) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return 0;
  in.seekg(static_cast<std::streamoff>(*offset));
  if (!in) return 0;
  in.read(into, static_cast<std::streamsize>(max));
  const auto n = static_cast<size_t>(std::max<std::streamsize>(0, in.gcount()));
  *offset += n;
  return n;
}

std::string ReadSmallFile(const std::string& path, size_t max) {
  std::string text(max, '\0');
  uint64_t offset = 0;
  text.resize(ReadFrom(path, &offset, text.data(), max));
  return text;
}

// Seconds as sbatch's --time in minutes (Slurm's resolution), at least one.
std::string TimeLimitMinutes(double seconds) {
  return std::to_string(std::max<long long>(1, static_cast<long long>(std::ceil(seconds / 60))));
}

// One build's job, from its submission (or re-attach) to its end.
class SlurmExecution final : public Execution {
 public:
  SlurmExecution(asio::io_context& io, CommandRunner& runner, const SlurmOptions& options, JobPlace place,
                 std::shared_ptr<int> followed)
      : io_(io), runner_(runner), options_(options), place_(std::move(place)), followed_(std::move(followed)),
        state_timer_(io), out_timer_(io), err_timer_(io) {
    ++*followed_;
  }
  ~SlurmExecution() override {
    *alive_ = false;  // the job runs on: the next service re-attaches
    if (!ended_) --*followed_;
  }

  void Submit(std::vector<std::string> sbatch) {
    runner_.Run(std::move(sbatch), [this, alive = alive_](const CommandResult& r) {
      if (!*alive) return;
      const JobIdResult id = r.ok() ? ParseSbatchJobId(r.out) : JobIdResult{"", r.Describe("sbatch")};
      if (id.id.empty()) return Refused(id.error);
      place_.id = id.id;
      place_.state = "PENDING";
      Changed();
      if (force_) return ForceStop();
      if (stop_) RequestStop();
      PollState();
    });
  }

  // A job submitted by an earlier service process.
  void Follow() { PollState(); }

  WorkerPlace place() const override { return {0, place_}; }

  void ReadEvents(std::span<char> buffer, ReadHandler handler) override {
    Tail(place_.stream, &out_offset_, out_timer_, buffer, [this, handler = std::move(handler)](size_t n, bool closed) {
      if (n > 0) SeenRunning();
      handler(n, closed);
    });
  }
  void ReadDiagnostics(std::span<char> buffer, ReadHandler handler) override {
    Tail(ErrPath(), &err_offset_, err_timer_, buffer, std::move(handler));
  }
  std::string DiagnosticsNow(size_t max_bytes) override {
    std::string text(max_bytes, '\0');
    text.resize(ReadFrom(ErrPath(), &err_offset_, text.data(), max_bytes));
    return text;
  }

  void RequestStop() override {
    stop_ = true;
    if (place_.id.empty() || ended_) return;  // applied once sbatch answers
    // A pending job has nothing to stop cooperatively: it is taken off the queue.
    if (place_.state == "PENDING") return Scancel({Command(options_, "scancel"), place_.id});
    Scancel({Command(options_, "scancel"), "--full", "--signal=TERM", place_.id});
  }
  void ForceStop() override {
    force_ = true;
    if (place_.id.empty() || ended_) return;
    Scancel({Command(options_, "scancel"), place_.id});
  }
  std::optional<WorkerExit> Poll() override {
    if (!ended_) return std::nullopt;
    return exit_;
  }
  void WatchPlace(std::function<void()> changed) override { changed_ = std::move(changed); }

  std::optional<EndVerdict> Judge(const StreamEnd& end) override {
    if (!refusal_.empty()) return EndVerdict{BuildState::kFailed, "slurm_refused", refusal_};
    const JobVerdict v = JudgeJobEnd({place_.state, end.finished, end.state, end.cancel_asked}, place_.id);
    if (!v.applies) return std::nullopt;
    return EndVerdict{v.state, v.reason, v.error};
  }
  bool JudgesUnsuccessfulEnds() const override { return true; }  // builds/executors/slurm_outcome.h

 private:
  std::string ErrPath() const { return StreamBase() + ".stderr"; }
  std::string FactsPath() const { return StreamBase() + ".facts"; }
  std::string StreamBase() const {
    const std::string suffix = ".events.jsonl";
    const std::string& s = place_.stream;
    return s.ends_with(suffix) ? s.substr(0, s.size() - suffix.size()) : s;
  }

  void Changed() {
    if (changed_) changed_();
  }

  void Refused(const std::string& why) {
    refusal_ = "Slurm refused the job: " + why + "; check --slurm-partition, --slurm-account and --slurm-arg";
    place_.state = "";
    End(std::nullopt, std::nullopt);
  }

  void End(std::optional<int> code, std::optional<int> signal) {
    if (!ended_) --*followed_;
    ended_ = true;
    exit_ = SlurmJobExit(place_.state, code, signal);
    // Cancelled as the service asked (a pending job taken off the queue, scancel after the
    // grace, or the stop's SIGTERM arriving before trtwatch handles it: Slurm says FAILED,
    // signal 15): the manager reads it as a worker that obeyed its stop.
    exit_.terminated = stop_ && (place_.state == "CANCELLED" || exit_.signal == SIGTERM);
    if (!code && !exit_.signal) exit_.code = 1;  // Slurm had no exit code: the stream and verdict tell
    Changed();
  }

  void Scancel(std::vector<std::string> argv) {
    runner_.Run(std::move(argv), [](const CommandResult&) {});  // the job's state shows what it did
  }

  void PollState() {
    runner_.Run({Command(options_, "scontrol"), "-o", "show", "job", place_.id}, [this, alive = alive_](const CommandResult& r) {
      if (!*alive || ended_) return;
      // A controller that does not answer (restarting) is asked again next time.
      const JobInfoResult got = ParseScontrolJob(r.out + r.err, place_.id);
      if (got.unknown_job) return End(std::nullopt, std::nullopt);  // purged: the stream tells the end
      if (got.info) Apply(*got.info);
      if (ended_) return;
      state_timer_.expires_after(NextPoll());
      state_timer_.async_wait([this, alive](const boost::system::error_code& ec) {
        if (!ec && *alive) PollState();
      });
    });
  }

  // The job's first events: it runs, though scontrol is asked only every state_poll. Its
  // facts (node, GPU) are written before them.
  void SeenRunning() {
    if (place_.state != "PENDING") return;
    place_.state = "RUNNING";
    place_.pending_reason.clear();
    ReadFacts(&place_);
    Changed();
  }

  void ReadFacts(JobPlace* place) const {
    if (const auto facts = ParseJobStartFacts(ReadSmallFile(FactsPath(), kMaxSlurmOutput))) {
      if (place->node.empty()) place->node = facts->node;
      place->cuda_visible_devices = facts->cuda_visible_devices;
      place->slurm_job_gpus = facts->slurm_job_gpus;
    }
  }

  // Every state_poll, or less often when many jobs are followed: slurmctld answers every
  // user of the cluster, and this service asks at most max_queries_per_second of it.
  std::chrono::milliseconds NextPoll() const {
    const auto share = std::chrono::milliseconds(1000 * *followed_ / options_.max_queries_per_second);
    return std::max(options_.state_poll, share);
  }

  void Apply(const SlurmJobInfo& info) {
    JobPlace next = place_;
    next.state = info.state;
    next.pending_reason = info.state == "PENDING" ? info.reason : "";
    if (!info.node.empty()) next.node = info.node;
    if (next.cuda_visible_devices.empty() && next.slurm_job_gpus.empty() && info.state != "PENDING") ReadFacts(&next);
    if (next != place_) {
      place_ = std::move(next);
      if (!IsFinalSlurmState(info.state)) Changed();
    }
    if (IsFinalSlurmState(info.state)) End(info.exit_code, info.exit_signal);
  }

  // Reads what the file has past *offset; waits a tail_poll when nothing; closed once
  // the job has ended and the file is read to its end.
  void Tail(const std::string& path, uint64_t* offset, asio::steady_timer& timer, std::span<char> buffer,
            ReadHandler handler) {
    const bool over = ended_;  // known before the read: what it wrote last is in the file
    const size_t n = ReadFrom(path, offset, buffer.data(), buffer.size());
    if (n > 0 || over) {
      asio::post(io_, [alive = alive_, handler = std::move(handler), n, over] {
        if (*alive) handler(n, n == 0 && over);
      });
      return;
    }
    timer.expires_after(options_.tail_poll);
    timer.async_wait([this, alive = alive_, path, offset, &timer, buffer, handler = std::move(handler)](
                         const boost::system::error_code& ec) mutable {
      if (!ec && *alive) Tail(path, offset, timer, buffer, std::move(handler));
    });
  }

  asio::io_context& io_;
  CommandRunner& runner_;
  const SlurmOptions& options_;
  JobPlace place_;
  // The jobs this executor follows, counted on the event loop's thread: this one from
  // its start to its end.
  const std::shared_ptr<int> followed_;
  asio::steady_timer state_timer_;
  asio::steady_timer out_timer_;
  asio::steady_timer err_timer_;
  uint64_t out_offset_ = 0;
  uint64_t err_offset_ = 0;
  bool stop_ = false;   // a cooperative stop was asked
  bool force_ = false;  // a forced stop was asked
  bool ended_ = false;  // Slurm counts the job as over (or it never was submitted)
  WorkerExit exit_;
  std::string refusal_;  // why sbatch refused it
  std::function<void()> changed_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // false once dropped: late handlers do nothing
};

}  // namespace

SlurmExecutor::SlurmExecutor(asio::io_context& io, std::unique_ptr<WorkerLauncher> launcher, SlurmOptions options)
    : io_(io), options_(std::move(options)), runner_(io, std::move(launcher), kMaxSlurmOutput, kCommandLimit),
      script_(options_.jobs_dir + "/trtwatch-job.sh") {}

SlurmExecutor::~SlurmExecutor() = default;

bool SlurmExecutor::Prepare(std::string* error) {
  const std::string part = script_ + ".part";
  {
    std::ofstream out(part, std::ios::binary | std::ios::trunc);
    out << kJobScript;
    if (!out.flush()) {
      *error = "cannot write the Slurm job script " + part + "; --data-dir must be writable";
      return false;
    }
  }
  if (std::rename(part.c_str(), script_.c_str()) != 0) {
    *error = "cannot write the Slurm job script " + script_ + "; --data-dir must be writable";
    return false;
  }
  return true;
}

std::vector<std::string> SlurmExecutor::SubmitArguments(const WorkerTask& task) const {
  const std::string base = options_.jobs_dir + "/" + task.build_id;
  std::vector<std::string> args = {"--parsable",
                                   "--job-name=trtwatch-" + task.build_id,
                                   "--output=" + base + ".events.jsonl",
                                   "--error=" + base + ".stderr",
                                   "--chdir=" + options_.jobs_dir,
                                   // A node that fails ends the build as NODE_FAIL, never a silent rerun
                                   // of it from the start under the same record.
                                   "--no-requeue"};
  if (task.timeout_seconds) args.push_back("--time=" + TimeLimitMinutes(*task.timeout_seconds + task.cancel_grace_seconds));
  if (!options_.partition.empty()) args.push_back("--partition=" + options_.partition);
  if (!options_.account.empty()) args.push_back("--account=" + options_.account);
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  // After --slurm-arg: sbatch takes an option's last value, so the routed GPU wins.
  if (!task.gpu.empty()) {
    if (const std::optional<GpuType> type = options_.gpu_types.Route(task.gpu).type) {
      for (std::string& a : SlurmGpuArguments(*type)) args.push_back(std::move(a));
    }
  }
  return args;
}

ExecutionStart SlurmExecutor::Start(const WorkerTask& task, const std::vector<std::string>& args) {
  // A replica whose table lacks the type a build was queued with elsewhere.
  if (!task.gpu.empty()) {
    if (const GpuCheck gpu = CheckGpu(task.gpu); !gpu.accepted()) return {nullptr, gpu.error};
  }
  JobPlace place;
  place.executor = "slurm";
  place.stream = options_.jobs_dir + "/" + task.build_id + ".events.jsonl";
  std::vector<std::string> sbatch = {Command(options_, "sbatch")};
  for (std::string& a : SubmitArguments(task)) sbatch.push_back(std::move(a));
  sbatch.insert(sbatch.end(), {script_, options_.jobs_dir + "/" + task.build_id + ".facts", options_.worker_exe});
  sbatch.insert(sbatch.end(), args.begin(), args.end());
  auto execution = std::make_unique<SlurmExecution>(io_, runner_, options_, std::move(place), followed_);
  execution->Submit(std::move(sbatch));
  return {std::move(execution), ""};
}

void SlurmExecutor::StopLeftover(const WorkerPlace&) {}

std::unique_ptr<Execution> SlurmExecutor::Reattach(const WorkerPlace& place) {
  // Only a job of this executor, whose stream is where this service writes streams.
  const JobPlace& job = place.job;
  if (job.executor != "slurm" || !IsSlurmJobId(job.id) || !job.stream.starts_with(options_.jobs_dir + "/") ||
      job.stream.find("/..") != std::string::npos) {
    return nullptr;
  }
  auto execution = std::make_unique<SlurmExecution>(io_, runner_, options_, job, followed_);
  execution->Follow();
  return execution;
}

}  // namespace trtwatch::builds
