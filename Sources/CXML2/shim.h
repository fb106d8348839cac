// libxml2 from Debian's libxml2-dev: the parser Deep Zoom descriptors (.dzi) are read with. Its ICU headers are
// left out (Foundation brings ICU of its own, whose declarations clash); Tessera uses none of libxml2's encoders.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/tree.h>
