#ifndef GATEPASS_COPENSSL_SHIM_H
#define GATEPASS_COPENSSL_SHIM_H
#include <openssl/hmac.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>

// EVP_sha256 is a plain function, but keeping every digest choice here makes the one
// algorithm the project signs with visible in one place.
static inline const EVP_MD *gatepass_sha256(void) { return EVP_sha256(); }

// The key type of the passes' signatures (GP2, api.md "Offline passes"), named once.
static inline int gatepass_ed25519_type(void) { return EVP_PKEY_ED25519; }
#endif
