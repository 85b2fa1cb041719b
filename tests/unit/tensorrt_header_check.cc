// <trtwatch/tensorrt.h> on its own, against the TEST DOUBLE's TensorRT headers (9.x or
// 10.x shape, by TRTWATCH_DOUBLE_TENSORRT_MAJOR): the adapters implement every pure
// virtual of TensorRT's interfaces, so users can instantiate them.
#include <trtwatch/tensorrt.h>

#include <type_traits>

static_assert(!std::is_abstract_v<trtwatch::tensorrt::ProgressMonitor>);
static_assert(!std::is_abstract_v<trtwatch::tensorrt::Logger>);
static_assert(std::is_base_of_v<nvinfer1::IProgressMonitor, trtwatch::tensorrt::ProgressMonitor>);
#if NV_TENSORRT_MAJOR >= 10
static_assert(std::is_base_of_v<nvinfer1::IVersionedInterface, trtwatch::tensorrt::ProgressMonitor>);
#endif
