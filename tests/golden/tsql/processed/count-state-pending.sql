-- processed: count_state pending
/* queuetop */ SELECT COUNT(*) FROM [dbo].[work_items] WITH (NOLOCK) WHERE [PROCESSED] = 0;
