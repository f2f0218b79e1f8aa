// Host helpers of the consumer (report.cpp, compiled by the C++ compiler).
#pragma once

#include <cuda_runtime_api.h>

// 0 when status is cudaSuccess; otherwise prints scanlab::cuda_error's line and returns 1.
int report_failure(cudaError_t status, const char* what);
// Prints the architectures this binary was built for, as the device check words them.
void say_built_for(const char* architectures);
