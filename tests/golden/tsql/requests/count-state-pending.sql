-- requests: count_state pending
/* queuetop */ SELECT COUNT(*) FROM [dbo].[RequestsQueue] WITH (NOLOCK) WHERE 1 = 1;
