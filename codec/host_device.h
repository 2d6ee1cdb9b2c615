// KVSTREAM_HD marks per-thread code that runs both in CUDA kernels and in the sequential CPU
// launcher used by tests on machines without a GPU (DietGPU-style shared per-thread code).
#pragma once
#if defined(__CUDACC__)
#define KVSTREAM_HD __host__ __device__ __forceinline__
#else
#define KVSTREAM_HD inline
#endif
