// The parts of test_device kept in files of their own.
#pragma once

#include "check.h"

// device_streams.cpp. first_path: 1 where MPI takes no device memory (the
// staged path only), else 0.
void counter_tests(stft::Checker &ck, int me, int size, int first_path);
void ordering_tests(stft::Checker &ck, int me, int size);
void model_c_end_order(stft::Checker &ck, int me, int size, int first_path);
void mixed_in_flight(stft::Checker &ck, int me, int size);
void atomics_test(stft::Checker &ck, int me, int size, int trials);
