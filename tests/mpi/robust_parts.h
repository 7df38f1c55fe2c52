// The parts of test_robust kept in files of their own.
#pragma once

#include "check.h"

// robust_failed_ops.cpp: a failed operation leaves its SF usable.
void failed_operation(stft::Checker &ck);
void misrouted_message(stft::Checker &ck);
void failed_step(stft::Checker &ck);
