// The JavaScript client of StillwaterLive's protocol (to be written).
