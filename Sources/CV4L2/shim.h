#ifndef GATEPASS_CV4L2_SHIM_H
#define GATEPASS_CV4L2_SHIM_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/time.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

// v4l2_open and v4l2_ioctl are variadic, which Swift cannot call; the VIDIOC_* request
// numbers are function-like macros, which Swift does not import. Both are fixed here.
static inline int gatepass_v4l2_open(const char *path, int flags) { return v4l2_open(path, flags); }
static inline int gatepass_v4l2_ioctl(int fd, unsigned long request, void *argument) {
    return v4l2_ioctl(fd, request, argument);
}
#endif
