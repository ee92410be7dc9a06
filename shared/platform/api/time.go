package api

import "time"

func timeFromUnix(s int64) time.Time { return time.Unix(s, 0).UTC() }
