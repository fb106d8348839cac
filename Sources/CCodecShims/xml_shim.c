// libxml2's parsed tree walked by local names for Swift, which does not see libxml2's headers: they need an
// include path (/usr/include/libxml2, linked as libxml2/ beside this file) that SwiftPM gives a system library
// only together with its link flag, and libxml2 is opened on first use (xml2_library.c).
#include "CCodecShims.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <stdio.h>
#include <string.h>

tessera_xml_document *tessera_xml_parse(const char *bytes, int count, char *message, size_t capacity) {
    xmlDocPtr document = xmlReadMemory(bytes, count, NULL, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (document == NULL) {
        const xmlError *error = xmlGetLastError();
        const char *text = error != NULL && error->message != NULL ? error->message : "empty";
        snprintf(message, capacity, "%.*s", (int)strcspn(text, "\n"), text);
    }
    return (tessera_xml_document *)document;
}

void tessera_xml_free(tessera_xml_document *document) { xmlFreeDoc((xmlDocPtr)document); }

static const xmlNode *element_named(const xmlNode *node, const char *name) {
    for (; node != NULL; node = node->next) {
        if (node->type != XML_ELEMENT_NODE) continue;
        if (strcmp((const char *)node->name, name) == 0) return node;
        const xmlNode *found = element_named(node->children, name);
        if (found != NULL) return found;
    }
    return NULL;
}

const tessera_xml_element *tessera_xml_find(tessera_xml_document *document, const tessera_xml_element *below,
                                            const char *name) {
    const xmlNode *first = below != NULL ? ((const xmlNode *)below)->children
                                         : xmlDocGetRootElement((xmlDocPtr)document);
    return (const tessera_xml_element *)element_named(first, name);
}

const char *tessera_xml_attribute(const tessera_xml_element *element, const char *name) {
    for (const xmlAttr *attribute = ((const xmlNode *)element)->properties; attribute != NULL;
         attribute = attribute->next) {
        if (strcmp((const char *)attribute->name, name) != 0) continue;
        const xmlNode *text = attribute->children;
        return text != NULL && text->content != NULL ? (const char *)text->content : "";
    }
    return NULL;
}
