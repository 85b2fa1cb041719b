// TEST DOUBLE, written from TensorRT's documented signatures: not NVIDIA's header.
// Declares only what trtwatch's TensorRT backend uses, so that CI can compile and
// test the backend without TensorRT. Modelled on TensorRT 10.x.
#pragma once

#define NV_TENSORRT_MAJOR 10
#define NV_TENSORRT_MINOR 99
#define NV_TENSORRT_PATCH 0
#define NV_TENSORRT_BUILD 0
