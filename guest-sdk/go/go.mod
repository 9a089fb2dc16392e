module github.com/wfhost/wfhost/guest-sdk/go

go 1.26
