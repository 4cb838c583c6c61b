#ifndef GATEPASS_CQRENCODE_SHIM_H
#define GATEPASS_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
