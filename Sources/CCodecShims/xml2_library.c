// Every libxml2 function Tessera calls (to read .dzi descriptors), defined here with libxml2's own signature and
// forwarded to libxml2.so.2, opened on the first call: linked, it loaded libxml2 and ICU's two libraries into every
// run.
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "CCodecShims.h"
#include "library_loader.h"

#define XML2_FUNCTIONS(F, V, P) \
    F(xmlDocGetRootElement, xmlNodePtr, (const xmlDoc *document), (document)) \
    V(xmlFreeDoc, (xmlDocPtr document), (document)) \
    F(xmlGetLastError, xmlErrorPtr, (void), ()) \
    F(xmlReadMemory, xmlDocPtr, \
      (const char *buffer, int size, const char *url, const char *encoding, int options), \
      (buffer, size, url, encoding, options))

TESSERA_LAZY_LIBRARY("libxml2.so.2", XML2_FUNCTIONS, tessera_xml2_load)
