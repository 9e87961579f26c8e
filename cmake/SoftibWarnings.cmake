# The warning set every softib target is built with (docs/style: zero warnings).
# Not included: -Wnull-dereference, which g++ 12 at -O2 reports falsely inside libstdc++'s
# std::string and std::variant (dozens of hits in code with no pointer at all).
set(SOFTIB_WARNINGS
  -Wall -Wextra -Wpedantic
  -Wshadow -Wconversion -Wsign-conversion
  -Wold-style-cast -Wcast-qual -Wcast-align
  -Wnon-virtual-dtor -Woverloaded-virtual
  -Wformat=2 -Wimplicit-fallthrough
  -Wundef -Wmissing-declarations -Wredundant-decls
)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND SOFTIB_WARNINGS -Wduplicated-cond -Wlogical-op -Wuseless-cast)
endif()
if(SOFTIB_WERROR)
  list(APPEND SOFTIB_WARNINGS -Werror)
endif()

function(softib_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:${SOFTIB_WARNINGS}>)
endfunction()
