-- Seed 004 (/work/shared/seeds/004_5f83b0d4c08f06f2.txt): the two <pre lang="sql"> blocks of the post, HTML and JSON
-- escapes undone (\r\n, \t, \/), joined by GO. Otherwise as the document gives them.
SET ANSI_NULLS ON
GO
SET QUOTED_IDENTIFIER ON
GO
SET ANSI_PADDING ON
GO

CREATE TABLE [dbo].[Job_Queue] (
[ID] [bigint] IDENTITY(1,1) NOT NULL,
[Priority] [tinyint] NOT NULL CONSTRAINT [DF_Job_Queue_Priority]  DEFAULT ((255)),
[Available_Date] [datetime] NOT NULL CONSTRAINT [DF_Job_Queue_Available_Date]  DEFAULT (getdate()),
[Timeout_Date] [datetime] NULL,
[Attempts] [int] NOT NULL CONSTRAINT [DF_Job_Queue_Attempts]  DEFAULT ((0)),
[Processing_Mark] [uniqueidentifier] NULL,
[Processing_Server] [varchar](50) COLLATE SQL_Latin1_General_CP1_CI_AS NULL,
[Last_Attempt_Start_Date] [datetime] NULL,
[Last_Attempt_End_Date] [datetime] NULL,
[Payload] [varchar](100) NOT NULL CONSTRAINT [DF_Job_Queue_Payload] DEFAULT ('a piece of work in the queue')
CONSTRAINT [PK_Job_Queue] PRIMARY KEY CLUSTERED
(
[ID] ASC
) ON [PRIMARY]
) ON [PRIMARY]

GO

SET ANSI_PADDING OFF
GO
GO
SET ANSI_NULLS ON
GO

SET QUOTED_IDENTIFIER ON
GO
 
ALTER PROCEDURE [dbo].[usp_API_Get_Job]
 
	@sProcessingServer VARCHAR(50),
	@nWorkCount INT = 1
 
AS
 
BEGIN
	-- SET NOCOUNT ON added to prevent extra result sets from
	-- interfering with SELECT statements.
	SET NOCOUNT ON;
	 
	DECLARE @xGUID UNIQUEIDENTIFIER
	 
	SET @xGUID = NEWID()
	 
	UPDATE jq SET
		Processing_Mark = @xGUID,
		Processing_Server = @sProcessingServer,
		Attempts = Attempts + 1,
		Last_Attempt_Start_Date = GETDATE(),
		Timeout_Date = DATEADD (mi, 15, GETDATE())
	FROM Job_Queue AS jq WITH (UPDLOCK)
	INNER JOIN (
		SELECT TOP (@nWorkCount) ID
		FROM Job_Queue WITH (READPAST)
		WHERE
		(Processing_Mark IS NULL AND Attempts = 0 AND Available_Date <= GETDATE())
		OR (
			ISNULL(Last_Attempt_End_Date, '1/1/2000') < Last_Attempt_Start_Date
			AND ISNULL (Timeout_Date, Available_Date) <= GETDATE()
			AND Attempts < 3
		)
		ORDER BY Priority ASC, Available_Date ASC
	) AS jqs
	ON jq.ID = jqs.ID
	WHERE
	(jq.Processing_Mark IS NULL AND jq.Attempts = 0 AND jq.Available_Date <= GETDATE())
	OR (
		ISNULL(jq.Last_Attempt_End_Date, '1/1/2000') < jq.Last_Attempt_Start_Date
		AND ISNULL (jq.Timeout_Date, jq.Available_Date) <= GETDATE()
		AND jq.Attempts < 3
	)
	 
	SELECT ID, Payload
	FROM Job_Queue
	WHERE Processing_Mark = @xGUID
END