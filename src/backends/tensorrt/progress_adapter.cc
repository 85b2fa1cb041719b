#include "backends/tensorrt/progress_adapter.h"

#include <NvInferVersion.h>

#include <type_traits>

#if !defined(NV_TENSORRT_MAJOR) || NV_TENSORRT_MAJOR < 9
#error "the TensorRT backend needs TensorRT 9 or newer: IProgressMonitor came in TensorRT 9.0"
#endif

namespace trtwatch::trt {

#if NV_TENSORRT_MAJOR >= 10
// 10.x and 11.x: a versioned interface whose getInterfaceInfo() TensorRT implements.
static_assert(std::is_base_of_v<nvinfer1::IVersionedInterface, nvinfer1::IProgressMonitor>,
              "TensorRT 10+ declares IProgressMonitor as an IVersionedInterface");
#else
// 9.x: a plain abstract class with the three callbacks and a virtual destructor.
static_assert(std::is_polymorphic_v<nvinfer1::IProgressMonitor> &&
                  std::has_virtual_destructor_v<nvinfer1::IProgressMonitor>,
              "TensorRT 9 declares IProgressMonitor as a plain abstract class");
#endif
// Every pure virtual is implemented: the three callbacks here, getInterfaceInfo (10+)
// inherited from TensorRT's own IProgressMonitor.
static_assert(!std::is_abstract_v<ProgressAdapter>);

}  // namespace trtwatch::trt
