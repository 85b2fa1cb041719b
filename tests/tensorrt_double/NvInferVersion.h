// TEST DOUBLE, written from TensorRT's documented signatures: not NVIDIA's header.
// Declares only what trtwatch's TensorRT backend uses, so that CI can compile and
// test the backend without TensorRT. Modelled on TensorRT 10.x; the tests build the
// backend again with TRTWATCH_DOUBLE_TENSORRT_MAJOR=9 and =11 for those versions'
// interfaces (the 9.x version number has room for one minor digit only).
#pragma once

#ifdef TRTWATCH_DOUBLE_TENSORRT_MAJOR
#define NV_TENSORRT_MAJOR TRTWATCH_DOUBLE_TENSORRT_MAJOR
#else
#define NV_TENSORRT_MAJOR 10
#endif
#if NV_TENSORRT_MAJOR < 10
#define NV_TENSORRT_MINOR 9
#else
#define NV_TENSORRT_MINOR 99
#endif
#define NV_TENSORRT_PATCH 0
#define NV_TENSORRT_BUILD 0
