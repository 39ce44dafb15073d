// Facts about this build, generated at build time (cmake/WriteBuildInfo.cmake).
#pragma once

namespace pebench {

struct BuildInfo {
  const char* version;
  const char* git_commit;  // "<sha>", "<sha>-dirty" or "unknown"
  const char* build_type;
  const char* compiler;
};

const BuildInfo& build_info();

}  // namespace pebench
