// What the public device calls handed out (memory from stf_device_malloc,
// streams, events) and which device made each. With it, freeing twice,
// destroying twice, using a handle the library never made, or using a
// stream or event after the device that made it was replaced is an error
// (STF_ERR_ARG) instead of undefined behaviour; memory and handles are
// released by the device that made them, also after stf_device_select.
#pragma once

#include "device/device.h"

namespace stf {

enum class HandleKind { memory, stream, event };

// Record h as made by d. May throw std::bad_alloc (the C entry points catch it).
void remember_handle(HandleKind kind, const void *h, Device *d);
// The device that made h; STF_ERR_ARG (naming `what`) when h is unknown.
int handle_maker(HandleKind kind, const void *h, const char *what, Device **maker);
// The same, and h must belong to the active device `active`.
int check_handle(HandleKind kind, const void *h, Device *active, const char *what);
// Drop h from the table after its release.
void forget_handle(HandleKind kind, const void *h);

}  // namespace stf
