// CUDA's stream memory operations (cuStreamWriteValue64, cuStreamWaitValue64)
// are driver calls; they are looked up through the runtime
// (cudaGetDriverEntryPointByVersion) so that libstarforest does not link
// libcuda itself.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace stf {

// STF_ERR_UNSUPPORTED where the driver or the current GPU has none.
int cuda_stream_write_word(cudaStream_t s, std::uint64_t *word, std::uint64_t value);
int cuda_stream_wait_word(cudaStream_t s, const std::uint64_t *word, std::uint64_t value);

}  // namespace stf
