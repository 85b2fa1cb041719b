// TEST DOUBLE, written from TensorRT's documented signatures: not NVIDIA's header.
// Declares only what trtwatch's TensorRT backend uses, so that CI can compile and
// test the backend without TensorRT. Modelled on TensorRT 10.x; the tests build the
// adapter a second time with TRTWATCH_DOUBLE_TENSORRT_MAJOR=9 for 9.x's interface.
#pragma once

#ifdef TRTWATCH_DOUBLE_TENSORRT_MAJOR
#define NV_TENSORRT_MAJOR TRTWATCH_DOUBLE_TENSORRT_MAJOR
#else
#define NV_TENSORRT_MAJOR 10
#endif
#define NV_TENSORRT_MINOR 99
#define NV_TENSORRT_PATCH 0
#define NV_TENSORRT_BUILD 0
