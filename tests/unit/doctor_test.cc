#include "cli/doctor_command.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "platform/shared_library.h"

namespace trtwatch {
namespace {

DoctorReport NoDriver() {
  DoctorReport r;
  r.version = "1.2.3";
  r.compiler = "g++ 12";
  r.build_type = "Release";
  r.nvml.error = "NVML (libnvidia-ml.so.1) could not be loaded: no such file";
  r.runtime.tried = {"libnvinfer.so.10"};
  r.runtime.error = "libnvinfer.so.10: cannot open shared object file";
  return r;
}

DoctorReport ReadyMachine() {
  DoctorReport r = NoDriver();
  r.compiled.built = true;
  r.compiled.header_version = "10.16.0";
  r.compiled.root = "/opt/tensorrt";
  r.compiled.major = 10;
  r.nvml.loaded = true;
  r.nvml.error.clear();
  r.nvml.library = "/usr/lib/libnvidia-ml.so.1";
  r.nvml.driver_version = "580.65";
  r.nvml.cuda_driver_version = 13000;
  GpuInfo gpu;
  gpu.name = "NVIDIA H200";
  gpu.cc_major = 9;
  gpu.memory_total_bytes = 141ULL << 30;
  r.nvml.gpus.push_back(gpu);
  r.runtime.found = true;
  r.runtime.library = "libnvinfer.so.10";
  r.runtime.path = "/opt/tensorrt/lib/libnvinfer.so.10";
  r.runtime.version = "10.16.0";
  r.runtime.onnx_parser_path = "/opt/tensorrt/lib/libnvonnxparser.so.10";
  r.runtime.error.clear();
  return r;
}

TEST(DoctorTest, NumbersGpusAsCudaDoesAndMatchesThemToNvml) {
  DoctorReport r = ReadyMachine();
  GpuInfo a100;
  a100.index = 0;
  a100.name = "NVIDIA A100";
  a100.cc_major = 8;
  a100.pci_bus_id = "00000000:3B:00.0";
  r.nvml.gpus[0].index = 1;
  r.nvml.gpus[0].pci_bus_id = "00000000:5E:00.0";
  r.nvml.gpus[0].uuid = "GPU-h200";
  r.nvml.gpus.insert(r.nvml.gpus.begin(), a100);
  // CUDA_VISIBLE_DEVICES=1: CUDA sees only the H200, as its device 0.
  r.cuda.loaded = true;
  r.cuda.library = "/usr/lib/libcuda.so.1";
  r.cuda.driver_version = 13000;
  CudaDevice h200;
  h200.name = "NVIDIA H200";
  h200.pci_bus_id = "0000:5e:00.0";
  h200.cc_major = 9;
  h200.memory_total_bytes = 141ULL << 30;
  r.cuda.devices.push_back(h200);

  const std::string text = FormatDoctorText(r);
  EXPECT_NE(text.find("CUDA driver: 13.0, /usr/lib/libcuda.so.1"), std::string::npos) << text;
  EXPECT_NE(text.find("GPUs: 2 (numbered as --device takes them)\n"
                      "  0: NVIDIA H200, compute capability 9.0, 141.0 GiB (NVML 1, PCI 0000:5e:00.0)\n"
                      "  hidden from CUDA (CUDA_VISIBLE_DEVICES): NVIDIA A100, compute capability 8.0"),
            std::string::npos)
      << text;
  const auto doc = nlohmann::json::parse(FormatDoctorJson(r));
  ASSERT_EQ(doc["gpus"].size(), 2u);
  EXPECT_EQ(doc["gpus"][0]["cuda_device"], 0);
  EXPECT_EQ(doc["gpus"][0]["nvml_index"], 1);
  EXPECT_EQ(doc["gpus"][0]["uuid"], "GPU-h200");
  EXPECT_TRUE(doc["gpus"][1]["cuda_device"].is_null());
  EXPECT_EQ(doc["gpus"][1]["nvml_index"], 0);
  EXPECT_EQ(doc["driver"]["cuda"], true);
  EXPECT_EQ(doc["backends"][1]["ready"], true);

  r.cuda.devices.clear();  // CUDA_VISIBLE_DEVICES hides every GPU: nothing can build
  EXPECT_EQ(nlohmann::json::parse(FormatDoctorJson(r))["backends"][1]["ready"], false);
}

TEST(DoctorTest, ComparesCompiledAndLoadedVersions) {
  EXPECT_EQ(CompareTensorRtVersions("10.16.0", "10.16.0"), VersionAgreement::kSame);
  EXPECT_EQ(CompareTensorRtVersions("10.16.0", "10.16.1"), VersionAgreement::kNewerMinor);
  EXPECT_EQ(CompareTensorRtVersions("10.16.0", "10.3.0"), VersionAgreement::kOlderMinor);
  EXPECT_EQ(CompareTensorRtVersions("10.16.0", "9.2.0"), VersionAgreement::kMismatch);
  EXPECT_EQ(CompareTensorRtVersions("10.16.0", "unknown"), VersionAgreement::kMismatch);
  DoctorReport r = ReadyMachine();
  r.runtime.version = "11.1.0";
  const std::string text = FormatDoctorText(r);
  EXPECT_NE(text.find("MISMATCH: built with TensorRT 10.16.0 headers, loaded 11.1.0"), std::string::npos) << text;
  const auto doc = nlohmann::json::parse(FormatDoctorJson(r));
  EXPECT_EQ(doc["tensorrt_runtime"]["matches_headers"], false);
  EXPECT_EQ(doc["backends"][1]["ready"], false);
  r.runtime.onnx_parser_path.clear();
  r.runtime.version = "10.16.0";
  // The platform's name: libnvonnxparser.so.10, nvonnxparser_10.dll.
  EXPECT_NE(FormatDoctorText(r).find(TensorRtLibraryName("nvonnxparser", 10) + " (the ONNX parser) was not found"),
            std::string::npos);
}

TEST(DoctorTest, TextSaysWhatIsMissingAndHowToGetIt) {
  const std::string text = FormatDoctorText(NoDriver());
  EXPECT_NE(text.find("trtwatch 1.2.3"), std::string::npos) << text;
  EXPECT_NE(text.find("NVIDIA driver: not found"), std::string::npos) << text;
  EXPECT_NE(text.find("GPUs: none visible"), std::string::npos) << text;
  EXPECT_NE(text.find("TensorRT at run time: not found (tried libnvinfer.so.10)"), std::string::npos) << text;
  EXPECT_NE(text.find("TensorRT_ROOT"), std::string::npos) << text;
  EXPECT_NE(text.find("--simulate"), std::string::npos) << text;
}

TEST(DoctorTest, TextListsGpusAndReadiness) {
  const std::string text = FormatDoctorText(ReadyMachine());
  EXPECT_NE(text.find("NVIDIA driver: 580.65 (CUDA 13.0)"), std::string::npos) << text;
  EXPECT_NE(text.find("0: NVIDIA H200, compute capability 9.0, 141.0 GiB"), std::string::npos) << text;
  EXPECT_NE(text.find("TensorRT at run time: 10.16.0, /opt/tensorrt/lib/libnvinfer.so.10"), std::string::npos);
  EXPECT_NE(text.find("tensorrt   ready"), std::string::npos) << text;
}

TEST(DoctorTest, JsonIsOneObjectWithStableFields) {
  const auto none = nlohmann::json::parse(FormatDoctorJson(NoDriver()));
  EXPECT_EQ(none["trtwatch"]["version"], "1.2.3");
  EXPECT_EQ(none["driver"]["nvml"], false);
  EXPECT_TRUE(none["driver"]["version"].is_null());
  EXPECT_TRUE(none["gpus"].empty());
  EXPECT_EQ(none["tensorrt_runtime"]["found"], false);
  EXPECT_TRUE(none["trtwatch"]["tensorrt_headers"].is_null());
  ASSERT_EQ(none["backends"].size(), 2u);
  EXPECT_EQ(none["backends"][1]["name"], "tensorrt");
  EXPECT_EQ(none["backends"][1]["built"], false);
  EXPECT_EQ(none["backends"][1]["ready"], false);

  const auto ready = nlohmann::json::parse(FormatDoctorJson(ReadyMachine()));
  EXPECT_EQ(ready["gpus"][0]["compute_capability"], "9.0");
  EXPECT_EQ(ready["gpus"][0]["memory_bytes"], 141ULL << 30);
  EXPECT_EQ(ready["driver"]["cuda_version"], "13.0");
  EXPECT_EQ(ready["tensorrt_runtime"]["version"], "10.16.0");
  EXPECT_EQ(ready["backends"][1]["ready"], true);
}

TEST(DoctorTest, DoubleBuiltBinaryIsNeverReady) {
  DoctorReport r = ReadyMachine();
  r.compiled.test_double = true;
  const auto report = nlohmann::json::parse(FormatDoctorJson(r));
  EXPECT_EQ(report["backends"][1]["ready"], false);
}

}  // namespace
}  // namespace trtwatch
