"""The services we call: Wikidata (links), OpenReview (imports), and the disk cache they share."""
