#ifndef TOOLHOST_CJANSSON_SHIM_H
#define TOOLHOST_CJANSSON_SHIM_H
#include <jansson.h>

// jansson's type test and flag macros are not imported into Swift; these inline functions stand in for them.
static inline json_type toolhost_json_typeof(const json_t *json) { return json_typeof(json); }
static inline size_t toolhost_json_flag_indent(int n) { return (size_t)JSON_INDENT(n); }
static inline size_t toolhost_json_flag_real_precision(int n) { return (size_t)JSON_REAL_PRECISION(n); }
static inline size_t toolhost_json_flag_compact(void) { return (size_t)JSON_COMPACT; }
static inline size_t toolhost_json_flag_ensure_ascii(void) { return (size_t)JSON_ENSURE_ASCII; }
static inline size_t toolhost_json_flag_encode_any(void) { return (size_t)JSON_ENCODE_ANY; }
static inline size_t toolhost_json_flag_decode_any(void) { return (size_t)JSON_DECODE_ANY; }
static inline size_t toolhost_json_flag_allow_nul(void) { return (size_t)JSON_ALLOW_NUL; }
static inline void toolhost_json_decref(json_t *json) { json_decref(json); }
static inline int toolhost_json_error_code(const json_error_t *e) { return (int)json_error_code(e); }
static inline const char *toolhost_json_empty_cstring(void) { return ""; }
#endif
