package engine

import (
	"context"

	"github.com/wfhost/wfhost/store"
)

func (e *Engine) activate(ctx context.Context, c store.Claim) {}
