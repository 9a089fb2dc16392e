package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// Listen delivers wake and cancel notices from a dedicated connection (outside the pool, which
// would otherwise lose a connection to it for as long as the host runs) until ctx ends or the
// connection fails. It returns nil when ctx ends.
func (s *Store) Listen(ctx context.Context, notices chan<- store.Notice) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, ch := range []string{s.wakeChannel, s.cancelChannel} {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("listen: %w", err)
		}
	}
	// Notices sent before LISTEN took effect are lost; this one tells the caller to look.
	select {
	case notices <- store.Notice{Kind: store.NoticeWake}:
	case <-ctx.Done():
		return nil
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("listen: %w", err)
		}
		notice := store.Notice{Kind: store.NoticeWake, Self: n.Payload == s.appName}
		if n.Channel == s.cancelChannel {
			notice = store.Notice{Kind: store.NoticeCancel, RunID: n.Payload}
			if id, ok := strings.CutPrefix(n.Payload, "requested:"); ok {
				notice = store.Notice{Kind: store.NoticeCancelRequested, RunID: id}
			}
			if id, ok := strings.CutPrefix(n.Payload, "pause:"); ok {
				notice = store.Notice{Kind: store.NoticePauseRequested, RunID: id}
			}
		}
		select {
		case notices <- notice:
		case <-ctx.Done():
			return nil
		}
	}
}
