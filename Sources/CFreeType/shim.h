#ifndef GATEPASS_CFREETYPE_SHIM_H
#define GATEPASS_CFREETYPE_SHIM_H
// FreeType's headers are named through macros (FT_FREETYPE_H …) that ft2build.h defines.
#include <ft2build.h>
#include FT_FREETYPE_H
#include FT_OUTLINE_H
#endif
