#include "config.h"
#include "unit.h"
Suite *ask_suite(void) { return suite_create("ask"); }
