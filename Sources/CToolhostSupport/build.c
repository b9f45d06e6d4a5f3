#include "CToolhostSupport.h"

// Package.swift defines these from SwiftPM's git information; a build outside git defines neither.
#ifndef TOOLHOST_BUILD_COMMIT
#define TOOLHOST_BUILD_COMMIT ""
#endif
#ifndef TOOLHOST_BUILD_UNCOMMITTED_CHANGES
#define TOOLHOST_BUILD_UNCOMMITTED_CHANGES 0
#endif

const char *toolhost_build_commit(void) { return TOOLHOST_BUILD_COMMIT; }

int toolhost_build_uncommitted_changes(void) { return TOOLHOST_BUILD_UNCOMMITTED_CHANGES; }
