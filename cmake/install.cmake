# install.cmake — `cmake --install` rules: the public headers, libpith.so (with its SONAME
# links) and libpith.a, pith.pc for pkg-config, and a relocatable CMake package so that a
# consumer's `find_package(pith)` gives the targets pith::pith (shared) and
# pith::pith_static. Included by the top-level CMakeLists.txt.
include(CMakePackageConfigHelpers)

set(PITH_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/pith)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/pith
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")

install(TARGETS pith pith_static
        EXPORT pithTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT pithTargets
        NAMESPACE pith::
        DESTINATION ${PITH_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/pithConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/pithConfig.cmake
                              INSTALL_DESTINATION ${PITH_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pithConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pithConfig.cmake
              ${PROJECT_BINARY_DIR}/pithConfigVersion.cmake
        DESTINATION ${PITH_INSTALL_CMAKEDIR})

# pith.pc finds its prefix from its own location (${pcfiledir}), so the tree can be installed
# anywhere with `cmake --install build --prefix DIR`.
file(RELATIVE_PATH PITH_PC_RELATIVE_PREFIX
     /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" PITH_PC_RELATIVE_PREFIX "${PITH_PC_RELATIVE_PREFIX}")
# OpenBLAS is not linked at all: libpith loads it on first use, and a static user's program
# only needs the RUNPATH to the build pith was built against, so that its dlopen finds that
# one (See Note [One OpenBLAS]), and libdl.
set(PITH_PC_OPENBLAS_LIBS "-Wl,-rpath,${PITH_OPENBLAS_LIBDIR} -ldl")
configure_file(${CMAKE_CURRENT_LIST_DIR}/pith.pc.in ${PROJECT_BINARY_DIR}/pith.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pith.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
