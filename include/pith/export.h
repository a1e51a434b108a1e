/* export.h — the PITH_API visibility macro. libpith is built with -fvisibility=hidden, so
 * only what is marked PITH_API is exported from libpith.so. */
#ifndef PITH_EXPORT_H
#define PITH_EXPORT_H

#if defined(_WIN32)
#  if defined(PITH_BUILDING_LIBRARY)
#    define PITH_API __declspec(dllexport)
#  else
#    define PITH_API __declspec(dllimport)
#  endif
#else
#  define PITH_API __attribute__((visibility("default")))
#endif

#endif /* PITH_EXPORT_H */
