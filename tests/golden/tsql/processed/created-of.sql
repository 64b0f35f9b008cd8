-- processed: created_of
/* queuetop */ SELECT [ID], CAST(NULL AS datetime2(3)) FROM [dbo].[work_items] WITH (NOLOCK) WHERE [ID] IN (?, ?);
