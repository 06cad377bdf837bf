// The target that compiles library_headers.hpp once, for every component to
// reuse (target_precompile_headers REUSE_FROM): CMake needs a target with a
// source of its own to own the precompiled header. Nothing links it.
namespace baton::precompiled_detail {
int anchor = 0;
}  // namespace baton::precompiled_detail
