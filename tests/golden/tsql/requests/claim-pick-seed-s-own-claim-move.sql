-- requests: claim_pick seed's own claim (move)
/* queuetop */ SELECT TOP (1) [id], NULL AS qt_type, NULL AS qt_token, NULL AS qt_attempts, [id], [request], [InsertedDate] FROM [dbo].[RequestsQueue] WITH (ROWLOCK, XLOCK) WHERE (1 = 1);
