"""Annotator links (``store/annotation_models.AnnotatorLink``): the queue's
owner makes one per annotator, and the name is fixed in its token. Whoever
holds a link labels as that name only, so nobody can read or change another
annotator's labels or invent annotators."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError

from store.annotation_models import AnnotationQueue, AnnotatorLink
from store.annotations import new_token
from store.database import Repository


class LinkQueries(Repository):
    """Annotators' own links to a queue."""

    def annotator_link(self, queue_id: str, name: str) -> AnnotatorLink:
        """The annotator's link to the queue, made on first asking (one per
        name: asking again gives the same link)."""
        found = self._link_named(queue_id, name)
        if found is not None:
            return found
        try:
            with self.session.begin() as db:
                db.add(AnnotatorLink(queue_id=queue_id, name=name, token=new_token()))
        except IntegrityError:  # made meanwhile by another request
            pass
        made = self._link_named(queue_id, name)
        assert made is not None
        return made

    def link_by_token(self, token: str) -> tuple[AnnotatorLink, AnnotationQueue] | None:
        query = (
            select(AnnotatorLink, AnnotationQueue)
            .join(AnnotationQueue, AnnotationQueue.id == AnnotatorLink.queue_id)
            .where(AnnotatorLink.token == token)
        )
        with self.session() as db:
            found = db.execute(query).first()
        return None if found is None else (found[0], found[1])

    def annotator_links(self, queue_id: str) -> list[AnnotatorLink]:
        query = (
            select(AnnotatorLink)
            .where(AnnotatorLink.queue_id == queue_id)
            .order_by(AnnotatorLink.created_at, AnnotatorLink.name)
        )
        with self.session() as db:
            return list(db.scalars(query))

    def revoke_annotator_link(self, queue_id: str, name: str) -> None:
        """The link stops working; the annotator's labels stay."""
        with self.session.begin() as db:
            db.execute(
                delete(AnnotatorLink).where(
                    AnnotatorLink.queue_id == queue_id, AnnotatorLink.name == name
                )
            )

    def _link_named(self, queue_id: str, name: str) -> AnnotatorLink | None:
        query = select(AnnotatorLink).where(
            AnnotatorLink.queue_id == queue_id, AnnotatorLink.name == name
        )
        with self.session() as db:
            return db.scalars(query).first()
