// A C target needs one source file; the declaration in include/CFuzzerDriver.h is all there is.
#include "CFuzzerDriver.h"
