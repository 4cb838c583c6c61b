#ifndef GATEPASS_CZBAR_SHIM_H
#define GATEPASS_CZBAR_SHIM_H
#include <zbar.h>
#endif
