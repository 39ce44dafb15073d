#include "cli/command.h"

int main(int argc, char** argv) { return pebench::pebench_main(argc, argv); }
