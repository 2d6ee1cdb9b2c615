// Built instead of device_info.cu when CUDA was not found at configure time.
#include "codec/cuda/device_info.h"

namespace kvstream::codec {

CudaDeviceInfo cuda_device_info() { return {false, 0, "no GPU (built without CUDA), CPU only"}; }

}  // namespace kvstream::codec
