#include "CToolhostSupport.h"
int toolhost_support_placeholder(void) { return 0; }
