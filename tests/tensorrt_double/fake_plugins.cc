// Fake libnvinfer_plugin.so.N of the TEST DOUBLE (not NVIDIA code): records that
// TensorRT's standard plugins were initialised, and with which logger namespace.
#include <NvInferPlugin.h>

#include "fake_tensorrt.h"

extern "C" bool initLibNvInferPlugins(void* logger, char const* libNamespace) {
  fake_trt::Record& record = fake_trt::GetRecord();
  ++record.plugin_inits;
  record.plugin_logger_given = logger != nullptr;
  record.plugin_namespace = libNamespace != nullptr ? libNamespace : "<null>";
  return true;
}
