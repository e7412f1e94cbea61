"""A PDF's accessibility read back (pikepdf): what a screen reader gets from a tagged file.

``structure(data)`` gives the catalog's language and marking, the title shown for the file, the PDF/UA part
claimed in the XMP metadata, the structure tree as (tag, alternative text, children) in reading order, and how
many marked-content sequences the pages' content streams tie to the tree.
"""

import io
from dataclasses import dataclass, field

import pikepdf


@dataclass
class Node:
    tag: str
    alt: str = ""
    headers: int = 0  # the cells a table cell names as its headers
    scope: str = ""  # a header cell's /Scope: "Row", "Column"
    children: list["Node"] = field(default_factory=list)

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def tags(self) -> list[str]:
        return [node.tag for node in self.walk()]


@dataclass
class Structure:
    lang: str
    marked: bool
    display_title: bool
    title: str
    ua_part: str
    tree: Node
    marked_content: int  # BDC … EMC sequences with an MCID in the pages' content streams

    def figures(self) -> list[Node]:
        return [node for node in self.tree.walk() if node.tag == "Figure"]


def _node(element) -> Node:
    if not isinstance(element, pikepdf.Dictionary) or "/S" not in element:
        return None
    node = Node(tag=str(element.S)[1:], alt=str(element.get("/Alt", "")))
    attributes = element.get("/A")
    if isinstance(attributes, pikepdf.Dictionary) and "/Headers" in attributes:
        node.headers = len(attributes.Headers)
    if isinstance(attributes, pikepdf.Dictionary) and "/Scope" in attributes:
        node.scope = str(attributes.Scope)[1:]
    kids = element.get("/K")
    kids = kids if isinstance(kids, pikepdf.Array) else [kids] if kids is not None else []
    node.children = [child for child in (_node(kid) for kid in kids) if child is not None]
    return node


def structure(data: bytes) -> Structure:
    with pikepdf.open(io.BytesIO(data)) as pdf:
        root = pdf.Root
        marked = bool(root.get("/MarkInfo", {}).get("/Marked", False))
        display_title = bool(root.get("/ViewerPreferences", {}).get("/DisplayDocTitle", False))
        with pdf.open_metadata() as xmp:
            ua_part = str(xmp.get("pdfuaid:part", ""))
        tree = Node(tag="StructTreeRoot")
        if "/StructTreeRoot" in root:
            tree = _node(pikepdf.Dictionary(S=pikepdf.Name("/StructTreeRoot"), K=root.StructTreeRoot.K))
        marked_content = 0
        for page in pdf.pages:
            for operands, operator in pikepdf.parse_content_stream(page):
                if str(operator) == "BDC" and len(operands) == 2 and isinstance(operands[1], pikepdf.Dictionary) \
                        and "/MCID" in operands[1]:
                    marked_content += 1
        return Structure(lang=str(root.get("/Lang", "")), marked=marked, display_title=display_title,
                         title=str(pdf.docinfo.get("/Title", "")), ua_part=ua_part, tree=tree,
                         marked_content=marked_content)
