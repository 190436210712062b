"""What a study's machine is and how fast it is: the fingerprint two studies are compared by."""
