// The attach library's own TensorRT declarations (src/attach/abi/nvinfer_abi.h) against
// the slot numbers TensorRT's documented headers give (docs/attach.md, counted with the
// two destructor slots), and the chained monitor's contract. Built once per major
// version (10, 11).
#include <gtest/gtest.h>

#include "attach/abi/nvinfer_abi.h"
#include "attach/abi/vtable_slot.h"
#include "attach/chained_monitor.h"
#include "core/clock.h"
#include "core/monitor.h"

namespace trtwatch::attach {
namespace {

using nvinfer1::apiv::VBuilder;
using nvinfer1::apiv::VBuilderConfig;

struct Slots {
  int create_config, create_network, serialized, engine, to_stream, set_monitor, get_monitor, logger_log;
};

#if TRTWATCH_ATTACH_MAJOR >= 11
constexpr Slots kDocumented{5, 6, 11, 17, 18, 45, 46, 4};  // 11.1
#else
constexpr Slots kDocumented{7, 8, 14, 20, 21, 56, 57, 0};  // 10.16
#endif

TEST(AttachAbi, BuilderSlotsAreTensorRtsOrderForThisMajorVersion) {
  EXPECT_EQ(SlotOf(&VBuilder::createBuilderConfig), kDocumented.create_config);
  EXPECT_EQ(SlotOf(&VBuilder::createNetworkV2), kDocumented.create_network);
  EXPECT_EQ(SlotOf(&VBuilder::buildSerializedNetwork), kDocumented.serialized);
  EXPECT_EQ(SlotOf(&VBuilder::buildEngineWithConfig), kDocumented.engine);
  EXPECT_EQ(SlotOf(&VBuilder::buildSerializedNetworkToStream), kDocumented.to_stream);
  EXPECT_EQ(SlotOf(&VBuilder::buildSerializedNetworkWithKernelText) + 1, nvinfer1::kBuilderSlots);
}

TEST(AttachAbi, ConfigMonitorSlotsAreTensorRtsOrderForThisMajorVersion) {
  EXPECT_EQ(SlotOf(&VBuilderConfig::setProgressMonitor), kDocumented.set_monitor);
  EXPECT_EQ(SlotOf(&VBuilderConfig::getProgressMonitor), kDocumented.get_monitor);
  EXPECT_EQ(SlotOf(&VBuilderConfig::getProgressMonitor) + 1, nvinfer1::kConfigSlots);
}

TEST(AttachAbi, LoggerAndProgressMonitorSlots) {
  EXPECT_EQ(SlotOf(&nvinfer1::ILogger::log), kDocumented.logger_log);
  // The same in 10.x and 11.x: after IVersionedInterface's two slots and destructor.
  EXPECT_EQ(SlotOf(&nvinfer1::IProgressMonitor::phaseStart), 4);
  EXPECT_EQ(SlotOf(&nvinfer1::IProgressMonitor::stepComplete), 5);
  EXPECT_EQ(SlotOf(&nvinfer1::IProgressMonitor::phaseFinish), 6);
}

TEST(AttachAbi, OlderLibrariesOfTheMajorVersionHaveFewerBuilderSlots) {
#if TRTWATCH_ATTACH_MAJOR >= 11
  EXPECT_EQ(nvinfer1::BuilderSlotsOf(110000), nvinfer1::kBuilderSlots);
#else
  EXPECT_EQ(nvinfer1::BuilderSlotsOf(100700), SlotOf(&VBuilder::buildEngineWithConfig));
  EXPECT_EQ(nvinfer1::BuilderSlotsOf(101500), SlotOf(&VBuilder::buildSerializedNetworkToStream));
  EXPECT_EQ(nvinfer1::BuilderSlotsOf(101600), nvinfer1::kBuilderSlots);
#endif
}

TEST(AttachAbi, PublicClassesAreAVptrAndTheImplementationPointer) {
  EXPECT_EQ(sizeof(nvinfer1::IBuilder), 2 * sizeof(void*));
  EXPECT_EQ(sizeof(nvinfer1::IBuilderConfig), 2 * sizeof(void*));
  EXPECT_EQ(sizeof(nvinfer1::IHostMemory), 2 * sizeof(void*));
}

// The program's monitor: counts, and refuses from step `refuse_from` on.
class CountingMonitor : public nvinfer1::IProgressMonitor {
 public:
  explicit CountingMonitor(int refuse_from) : refuse_from_(refuse_from) {}
  void phaseStart(char const*, char const*, int32_t) noexcept override { ++starts; }
  bool stepComplete(char const*, int32_t step) noexcept override {
    ++steps;
    return refuse_from_ < 0 || step < refuse_from_;
  }
  void phaseFinish(char const*) noexcept override { ++finishes; }
  int starts = 0, steps = 0, finishes = 0;

 private:
  const int refuse_from_;
};

TEST(ChainedMonitor, TheProgramsMonitorGetsEveryCallbackEvenAfterTrtwatchRefuses) {
  SteadyClock clock;
  Monitor watch(clock);
  CountingMonitor own(-1);
  ChainedMonitor chained(watch, &own);
  chained.phaseStart("Build", nullptr, 3);
  EXPECT_TRUE(chained.stepComplete("Build", 0));
  ASSERT_TRUE(watch.RequestCancel(CancelReason::kTimeout, "timed out"));
  EXPECT_FALSE(chained.stepComplete("Build", 1));
  EXPECT_FALSE(chained.stepComplete("Build", 2));
  chained.phaseFinish("Build");
  EXPECT_EQ(own.starts, 1);
  EXPECT_EQ(own.steps, 3);
  EXPECT_EQ(own.finishes, 1);
}

TEST(ChainedMonitor, TheProgramsRefusalCancelsAndTrtwatchStillSeesTheStep) {
  SteadyClock clock;
  Monitor watch(clock);
  CountingMonitor own(1);
  ChainedMonitor chained(watch, &own);
  chained.phaseStart("Build", nullptr, 3);
  EXPECT_TRUE(chained.stepComplete("Build", 0));
  EXPECT_FALSE(chained.stepComplete("Build", 1));
  EXPECT_FALSE(watch.IsCancelRequested());  // the program's own cancel, not trtwatch's
}

TEST(ChainedMonitor, WithoutAProgramMonitorTrtwatchAloneDecides) {
  SteadyClock clock;
  Monitor watch(clock);
  ChainedMonitor chained(watch, nullptr);
  chained.phaseStart("Build", nullptr, 2);
  EXPECT_TRUE(chained.stepComplete("Build", 0));
  watch.RequestCancel(CancelReason::kUser, "stop");
  EXPECT_FALSE(chained.stepComplete("Build", 1));
}

}  // namespace
}  // namespace trtwatch::attach
