# One library target per src/ module, with a private include root so that a module can only
# include the headers of modules it declares (directly or through a declared module).
#
#   softib_module(wire DEPS base LIBS ZLIB::ZLIB)
#
# creates target softib_<name> (alias softib::<name>). Its headers are reachable as
# "<name>/x.hpp" only through ${CMAKE_BINARY_DIR}/include/<name>, a directory holding one
# symlink <name> -> src/<name>. Nothing else is on the include path, so including
# "sm/engine.hpp" from a module that does not depend on sm fails to compile.
#
# DEPS must name lower layers only; the layer order is checked here (docs/architecture.md).
set(SOFTIB_LAYER_base   0)
set(SOFTIB_LAYER_wire   1)
set(SOFTIB_LAYER_packet 2)
set(SOFTIB_LAYER_mad    2)
set(SOFTIB_LAYER_verbs  3)
set(SOFTIB_LAYER_rc     4)
set(SOFTIB_LAYER_ipc    4)
set(SOFTIB_LAYER_engine 6)
set(SOFTIB_LAYER_link   5)
set(SOFTIB_LAYER_fabric 6)
set(SOFTIB_LAYER_sm     7)
set(SOFTIB_LAYER_provider 7)
set(SOFTIB_LAYER_tools  8)
set(SOFTIB_LAYER_daemon 8)
set(SOFTIB_LAYER_compat 8)
set(SOFTIB_LAYER_api    8)

function(softib_module name)
  cmake_parse_arguments(M "" "" "DEPS;LIBS" ${ARGN})
  if(NOT DEFINED SOFTIB_LAYER_${name})
    message(FATAL_ERROR "module '${name}' has no layer in cmake/SoftibModule.cmake")
  endif()
  foreach(dep IN LISTS M_DEPS)
    if(NOT SOFTIB_LAYER_${dep} LESS SOFTIB_LAYER_${name})
      message(FATAL_ERROR "module '${name}' (layer ${SOFTIB_LAYER_${name}}) may not depend on "
                          "'${dep}' (layer ${SOFTIB_LAYER_${dep}}): dependencies point downward")
    endif()
  endforeach()

  set(root ${CMAKE_BINARY_DIR}/include/${name})
  file(MAKE_DIRECTORY ${root})
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR} ${root}/${name} SYMBOLIC)

  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(sources)
    add_library(softib_${name} STATIC ${sources})
    target_include_directories(softib_${name} PUBLIC ${root})
    set(scope PUBLIC)
  else()
    add_library(softib_${name} INTERFACE)
    target_include_directories(softib_${name} INTERFACE ${root})
    set(scope INTERFACE)
  endif()
  add_library(softib::${name} ALIAS softib_${name})
  foreach(dep IN LISTS M_DEPS)
    target_link_libraries(softib_${name} ${scope} softib_${dep})
  endforeach()
  if(M_LIBS)
    target_link_libraries(softib_${name} ${scope} ${M_LIBS})
  endif()
  if(sources)
    softib_warnings(softib_${name})
  endif()
endfunction()
