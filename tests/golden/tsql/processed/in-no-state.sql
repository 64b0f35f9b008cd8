-- processed: in_no_state
/* queuetop */ SELECT NULL, COUNT(*) FROM [dbo].[work_items] WITH (NOLOCK) WHERE (CASE WHEN ([PROCESSED] = 0) OR ([PROCESSED] = 1) THEN 1 ELSE 0 END) = 0;
