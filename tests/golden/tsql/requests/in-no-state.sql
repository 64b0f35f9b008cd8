-- requests: in_no_state
/* queuetop */ SELECT NULL, COUNT(*) FROM [dbo].[RequestsQueue] WITH (NOLOCK) WHERE (CASE WHEN (1 = 1) THEN 1 ELSE 0 END) = 0;
