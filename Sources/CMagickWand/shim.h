#ifndef GATEPASS_CMAGICKWAND_SHIM_H
#define GATEPASS_CMAGICKWAND_SHIM_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/time.h>
// pkg-config gives these as -D flags, which SwiftPM refuses for system libraries; they must
// match the installed build (Debian's libmagickwand-6.q16: 16-bit quantum, no HDRI).
#ifndef MAGICKCORE_HDRI_ENABLE
#define MAGICKCORE_HDRI_ENABLE 0
#endif
#ifndef MAGICKCORE_QUANTUM_DEPTH
#define MAGICKCORE_QUANTUM_DEPTH 16
#endif
#include <wand/MagickWand.h>
#endif
