#ifndef FOB_CXML2_SHIM_H
#define FOB_CXML2_SHIM_H
// libxml2's SAX2 interface for fob-xml: the parser context, the SAX
// handler and the options (libxml/parser.h, libxml/SAX2.h).
#include <libxml/parser.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>

// The line the parser has reached (1 for the first).
static inline int fob_xml_line(xmlParserCtxtPtr context) {
    return (context != NULL && context->input != NULL) ? context->input->line : 1;
}

// Whether the document was well-formed so far.
static inline int fob_xml_well_formed(xmlParserCtxtPtr context) { return context->wellFormed; }

#endif
